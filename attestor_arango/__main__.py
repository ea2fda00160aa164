from attestor_arango.interfaces.cli.main import main

raise SystemExit(main())
