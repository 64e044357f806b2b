"""The offline demos' own ingredients: a small base model pre-trained from scratch with a
known, planted gender bias (:mod:`.base_model`), which ``make demo`` then debiases; with
``axis="religion"`` also an invented religion-game association (:mod:`.religion`), read by a
template probe (:mod:`.association_probe`), which ``make demo-religion`` removes with n-ary
CDA."""
