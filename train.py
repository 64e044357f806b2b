"""Fine-tune a masked LM on a CDS corpus, scoring bias at step 0 and every checkpoint.

accelerate launch train.py recipes/gap_cds.yaml [key=value ...]
"""

import sys

from cdsbias.train.run import main

if __name__ == "__main__":
    sys.exit(main())
