cluster "x" {
  ttl                = "1s"
  node_timeout       = "200ms"  # WARNING: node_timeout large against ttl
  restart_quarantine = false
  settings {
    appendonly  = "yes"
    appendfsync = "everysec"  # WARNING: appendfsync without restart quarantine
  }
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
  master "d" { address = "127.0.0.1:7004" }  # WARNING: Even number of masters
  lock "billing/*" {
    fencing = true  # WARNING: Fencing without appendfsync always
  }
}
