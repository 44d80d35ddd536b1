cluster "x" {
  settings {
    maxmemory_polcy        = "noeviction"  # ERROR: Unknown setting: settings.maxmemory_polcy is not a Redis setting this tool knows. Did you mean "maxmemory_policy"?
    frobnicate             = "yes"         # ERROR: Unknown setting
    appendonly             = "maybe"       # ERROR: Invalid setting value: appendonly takes yes or no
    appendfsync            = "sometimes"   # ERROR: Invalid setting value: appendfsync takes one of always, everysec, no
    maxmemory              = "lots"        # ERROR: Invalid setting value: maxmemory takes a memory size
    hz                     = "fast"        # ERROR: Invalid setting value: hz takes a whole number
    notify_keyspace_events = "Kq"          # ERROR: Invalid setting value: notify_keyspace_events takes flag characters
    maxmemory_policy       = "volatile-lru" # ERROR: Setting breaks lock safety: maxmemory_policy "volatile-lru" can evict lock keys
  }
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}
