"""What stops an update before anything is registered: duplicate identities, what the API server would reject,
missing prerequisites."""
