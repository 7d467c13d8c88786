"""The panel's behaviour: parroting, cut-off turns, collapsed verdicts, per-model diagnostics
and their console text."""
