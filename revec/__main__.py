from revec.cli import main

raise SystemExit(main())
