"""kchaos."""
