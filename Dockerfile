# syntax=docker/dockerfile:1
# The relay's image for people who build with Docker (or podman/buildah).
# `make image` builds the same image without a daemon (build/cmd/image,
# docs/image.md): same static binary, user, entrypoint, command, env and
# labels; build/image's TestDockerfileMatchesBuilder keeps the two in step.
#
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg VERSION=$(build/version.sh) \
#     --build-arg REVISION=$(git rev-parse HEAD) \
#     --build-arg BUILD_DATE=$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd) \
#     -t ghcr.io/liqo-relay/relay:$(build/version.sh) .

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
ARG REVISION=unknown
ARG BUILD_DATE=unknown
WORKDIR /src
COPY . .
# Static (no cgo), no build paths, no VCS stamp, the version, commit and
# build date (the commit's time, RFC 3339 UTC) linked in.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -buildvcs=false \
      -ldflags "-X github.com/liqo-relay/relay/internal/version.Version=$VERSION -X github.com/liqo-relay/relay/internal/version.Commit=$REVISION -X github.com/liqo-relay/relay/internal/version.BuildDate=$BUILD_DATE" \
      -o /out/relay ./cmd/relay

# No base: the binary is the whole image, with no shell.
FROM scratch
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="liqo-relay" \
      org.opencontainers.image.source="https://github.com/liqo-relay/relay" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.revision="$REVISION"
COPY --from=build /out/relay /relay
ENV PATH=/
WORKDIR /
# Non-root by default. TUN mode needs NET_ADMIN and /dev/net/tun from the
# pod's securityContext (the chart sets them); netstack mode needs neither.
USER 65532:65532
ENTRYPOINT ["/relay"]
CMD ["run", "--kubernetes", "-c", "/etc/relay/relay.yaml"]
