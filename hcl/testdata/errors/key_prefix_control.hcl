cluster "x" {
  key_prefix = "lock\u001b]0;owned\u0007:"  # ERROR: Control character in key prefix
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}
