# the plugin projects under projects/ are users' code with test suites of their own: the tests here copy them and
# run those suites in their own folders, so this suite does not collect them
collect_ignore_glob = ["projects/*"]
