variable "password" {
  sensitive = true
  default   = "pw"
}

cluster "x" {
  master "a" {
    address  = "127.0.0.1:7001"
    password = var.pasword  # ERROR: Did you mean var.password?
  }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
  key_prefix = local.prefix  # ERROR: only var.NAME references
}
