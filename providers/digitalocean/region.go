package digitalocean

// defaultMetadataRegionURL is the droplet metadata service's region,
// reachable only from a droplet; Init reads it (cloud.RegionFromMetadata)
// when REGION is not set.
const defaultMetadataRegionURL = "http://169.254.169.254/metadata/v1/region"
