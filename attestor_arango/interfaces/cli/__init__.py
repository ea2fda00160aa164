"""The ``attestor-arango`` command line."""
