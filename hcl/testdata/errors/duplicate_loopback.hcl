cluster "x" {
  master "a" { address = "localhost:7001" }
  master "b" { address = "127.0.0.1:7001" }  # ERROR: Duplicate master address: master "b" has the same address 127.0.0.1:7001 (localhost:7001 spelt another way) as master "a"
  master "c" { address = "[::1]:7001" }      # ERROR: Duplicate master address
  master "d" { address = "LOCALHOST.:07001" } # ERROR: Duplicate master address
  master "e" { address = "127.0.0.2:7001" }
}
