"""Event store for Renature games on Redis Streams."""
