locals {
  # Admission webhooks: called by kube-apiserver, which cannot mint Google ID tokens, so the
  # platform lets every request in and the function verifies the cluster's own bearer JWT.
  webhooks = ["mutate-namespace", "validate-namespace", "validate-template", "guard-initializing"]
  # Reconcilers: Pub/Sub push with a Google-signed OIDC token, checked by IAM and by the function.
  reconcilers = ["reconcile-namespace", "reconcile-template"]
  functions   = concat(local.webhooks, local.reconcilers)
}
