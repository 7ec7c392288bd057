# Everything Furnish deploys needs these APIs; an empty project has none of them. Turning them off
# on destroy would break whatever else the project runs, so destroy leaves them on.
locals {
  apis = [
    "artifactregistry.googleapis.com", # gen2 functions store their build images here
    "bigquery.googleapis.com",
    "cloudbuild.googleapis.com", # builds each function from its uploaded bundle
    "cloudfunctions.googleapis.com",
    "iam.googleapis.com",
    "iamcredentials.googleapis.com", # Pub/Sub mints push OIDC tokens; Workload Identity
    "pubsub.googleapis.com",
    "run.googleapis.com", # gen2 functions are Cloud Run services
    "secretmanager.googleapis.com",
    "storage.googleapis.com",
  ]
}

resource "google_project_service" "api" {
  for_each           = toset(local.apis)
  project            = var.project_id
  service            = each.key
  disable_on_destroy = false
}

data "google_project" "this" {
  project_id = var.project_id
}
