"""The universal-ctags fallback backend (:mod:`.backend`), how ctags is found and which languages
it maps (:mod:`.detect`), and how its kinds become our tags and imports (:mod:`.kinds`)."""
