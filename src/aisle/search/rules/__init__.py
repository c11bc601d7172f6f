"""Merchandising rules: the model, their storage, matching (RuleBook) and tenant validation."""
