from wordstats.cli import main

raise SystemExit(main())
