"""The club-3090 catalogue (noonghunna/club-3090) imported into our registry layout."""
