"""Live views of a running simulation: the feed the stepping loop fills, and the built-in web
page that shows it (docs/view.md)."""
