"""Agreement with human labels: accuracy, kappa, rank correlations, paired comparisons of two
ways of judging the same items, and the debate's effect (blind vs final verdicts)."""
