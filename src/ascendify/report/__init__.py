"""Migration report: ``ascendify migrate`` and ``ascendify report`` (report.json + static HTML)."""
