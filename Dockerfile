# syntax=docker/dockerfile:1
# The relay's image for people who build with Docker (or podman/buildah).
# `make image` builds the same image without a daemon (build/cmd/image,
# docs/image.md): same static binary, user, entrypoint, command, env and
# labels; build/image's TestDockerfileMatchesBuilder keeps the two in step.
#
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     --build-arg VERSION=$(git describe --always --dirty) \
#     --build-arg REVISION=$(git rev-parse HEAD) \
#     -t ghcr.io/liqo-relay/relay:$(git describe --always --dirty) .

FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
COPY . .
# Static (no cgo), no build paths, no VCS stamp, the version linked in.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -buildvcs=false \
      -ldflags "-X github.com/liqo-relay/relay/internal/version.Version=$VERSION" \
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
