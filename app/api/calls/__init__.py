"""/api/calls — place an outbound call that an application drives once it is answered."""
