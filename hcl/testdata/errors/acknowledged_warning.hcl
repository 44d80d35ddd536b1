cluster "x" {
  ignore "fencing-fsync" {
    reason = "fence numbers are advisory here"
  }
  ignore "weak-persistence" {
    reason  = "throwaway masters"
    masters = ["a", "b"]
  }
  restart_quarantine = false
  settings {
    appendonly = "no"  # WARNING: No persistence without restart quarantine
  }
  master "a" { address = "127.0.0.1:7001" }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
  lock "billing/*" {
    fencing = true
  }
}
