"""Systems and leaderboards: win rates, length bias, the Davidson leaderboard and its calibrated
(PPI) variants, direct systems' means, and the adaptive comparison design."""
