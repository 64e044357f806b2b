"""Fine-tune a masked LM on a CDS corpus, scoring bias at step 0 and every checkpoint, then
fine-tune the base and the final model on the recipe's downstream_tasks (if any).

accelerate launch train.py recipes/gap_cds.yaml [key=value ...]
"""

import sys

from cdsbias.downstream.after_training import main
from cdsbias.progress import plain_progress_lines

if __name__ == "__main__":
    with plain_progress_lines():  # progress bars in a log: plain lines, not \r redraws
        sys.exit(main())
