"""``train.py`` that also records, per process, the original tokens of every example it
trains on (``seen-rank{RANK}.jsonl`` in the output folder); used by the 2-process test.

Masked positions are restored from the labels, padding is dropped, so each line is one
training example's token ids as the data pipeline produced them.
"""

import json
import os
import sys
from pathlib import Path

import transformers

from cdsbias.train.run import main

_original_step = transformers.Trainer.training_step


def _recording_step(self, model, inputs, *args, **kwargs):
    rank = int(os.environ.get("RANK", "0"))
    ids, labels, mask = inputs["input_ids"], inputs["labels"], inputs["attention_mask"]
    rows = []
    for row_ids, row_labels, row_mask in zip(ids.tolist(), labels.tolist(), mask.tolist()):
        tokens = [lab if lab != -100 else tok for tok, lab in zip(row_ids, row_labels)]
        rows.append([t for t, m in zip(tokens, row_mask) if m])
    out = Path(self.args.output_dir) / f"seen-rank{rank}.jsonl"
    with open(out, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"step": self.state.global_step, "rows": rows}) + "\n")
    return _original_step(self, model, inputs, *args, **kwargs)


transformers.Trainer.training_step = _recording_step

if __name__ == "__main__":
    sys.exit(main())
