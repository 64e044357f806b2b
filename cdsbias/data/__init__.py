"""Data the project reads: benchmark and corpus downloads (:mod:`.fetch`), the training
corpora a recipe can name (:mod:`.corpora`), the generated occupational corpus
(:mod:`.occupations`)."""
