variable "secret" {
  sensitive = true
  default   = "Zq7-not-for-your-eyes"
}

cluster "x" {
  key_prefix = "${var.secret}:"  # ERROR: Sensitive value not allowed here
  settings {
    requirepass = var.secret  # ERROR: Sensitive value not allowed here
  }
  master "a" {
    address  = var.secret  # ERROR: Sensitive value not allowed here
    username = var.secret  # ERROR: Sensitive value not allowed here
    password = var.secret
  }
  master "b" { address = "127.0.0.1:7002" }
  master "c" { address = "127.0.0.1:7003" }
}
