"""The outbound choke point and the login gate: every effect that leaves a pane (sends, offer
mints and closes) passes ``effects``, which holds it while the visitor is an unclaimed guest;
the private-value screen on held sends; claiming a guest's rooms."""
