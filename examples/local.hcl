# Five throwaway masters on this machine, as `redlock up` starts them.

cluster "local" {
  key_prefix   = "lock:"
  ttl          = "30s"
  max_ttl      = "5m"
  node_timeout = "50ms"

  # These local masters are throwaway: they start empty and nothing depends on them
  # surviving a restart, so waiting out max_ttl after each restart would only slow
  # development down. Keep the quarantine on for real deployments.
  restart_quarantine = false

  master "m1" { address = "127.0.0.1:7001" }
  master "m2" { address = "127.0.0.1:7002" }
  master "m3" { address = "127.0.0.1:7003" }
  master "m4" { address = "127.0.0.1:7004" }
  master "m5" { address = "127.0.0.1:7005" }
}
