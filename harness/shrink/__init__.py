"""`kchaos shrink`: minimise a failing run's plan (delta debugging over its steps, then
over their timing), rerunning each candidate because runs are not deterministic."""
