"""The HTTP/WebSocket gateway for frontends: a thin adapter between clients and the services.

It authenticates seats, turns HTTP requests into command envelopes for the rules service and
builds each viewer's picture of a game by replaying the game's stream with the pure core. It
never decides a rule itself. ``create_app`` lives in ``gameserver.gateway.app``.
"""
