"""Output formats for scan findings: text, JSON, SARIF 2.1.0, CSV; and the summary."""
