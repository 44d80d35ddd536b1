# The smallest cluster that tolerates one failed master: quorum 2 of 3.

cluster "small" {
  ttl          = "10s"
  node_timeout = "50ms"

  settings {
    maxmemory_policy = "noeviction"
  }

  master "a" { address = "redis-a.internal:6379" }
  master "b" { address = "redis-b.internal:6379" }
  master "c" { address = "redis-c.internal:6379" }
}
