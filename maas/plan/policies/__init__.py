"""The Kuadrant policies: one TokenRateLimitPolicy and one AuthPolicy per model, one AuthPolicy per tenant Gateway."""
