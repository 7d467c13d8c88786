"""Reporting: the console summary, report.md, the HTML report, plots and export."""
