"""Goofspiel, the Game of Pure Strategy: a pure rules core (sealed bids for a prize deck).

See docs/rules-goofspiel.md for the rules as this server plays them and its rulings.
"""
