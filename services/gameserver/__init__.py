"""Renature services: thin adapters around the rules core."""
