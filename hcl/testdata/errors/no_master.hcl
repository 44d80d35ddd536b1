cluster "x" {  # ERROR: No master
  ttl = "30s"
}
