"""The offline demos' own ingredients: a small base model pre-trained from scratch with a
known, planted gender bias (:mod:`.base_model`), which ``make demo`` then debiases."""
