"""The token service (port 8086): RFC 7523 JWT bearer grant, JWKS, health."""
