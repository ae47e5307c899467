# The gateway's container image: a static binary built by scripts/build
# (the build line CI tests) on a distroless base with CA certificates and a
# non-root user.
#
#   docker build --build-arg VERSION=v1.2.0 -t gateway .
#   docker run -p 8080:8080 -e GATEWAY_ADDR=0.0.0.0:8080 gateway serve --fake-vendors
#
# The SQLite file defaults to ./gateway.db in the working directory
# (/data, a volume); set GATEWAY_DATABASE_URL for PostgreSQL.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
ARG BUILD_TIME=""
RUN VERSION="$VERSION" BUILD_TIME="$BUILD_TIME" scripts/build /out/gateway

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gateway /usr/local/bin/gateway
WORKDIR /data
VOLUME /data
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/gateway"]
CMD ["serve"]
