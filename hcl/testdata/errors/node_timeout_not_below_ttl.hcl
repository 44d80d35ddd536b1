cluster "x" {
  ttl          = "1s"
  node_timeout = "1s"  # ERROR: node_timeout not below ttl
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}
