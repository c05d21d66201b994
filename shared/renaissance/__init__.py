"""Renaissance (Masahiro Nakajima, 2012) rules core: pure, deterministic, no I/O.

Nothing in the game is hidden: every player (and every spectator) sees the whole board, both
supplies and both collections of pieces, and the game has no chance (the seed only names the game
and seeds the bots). See docs/rules-renaissance.md for the rulings.
"""
