"""Rule scoring: final-answer extraction and rule-based equivalence, run in worker processes with hard limits."""
