"""Aisle: multi-tenant retail search and recommendation platform."""

__version__ = "0.1.0"
