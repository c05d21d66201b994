"""What the gateway does for a player, written once and apart from HTTP: create a game, take,
leave or reclaim a seat, start, cancel, resign, take a seat back from its bot, list the lobby.

Each use case is a small class over narrow ports (`ports`: typing protocols of the read side,
the command bus, the lobby's records, the seat tokens, the seed staging, the idempotency
records) and answers a plain result or raises a `refusals.Refusal`. The routes
(``gateway.routers``) only translate HTTP to a call and its answer back; ``gateway.case_book``
builds the use cases over the gateway's Redis-backed parts.
"""
