# One image for every command: `docker run lakestream ingest|sync|verify|demo ...`.
# Build: docker build -t lakestream .
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY . .
RUN mvn -B -q -DskipTests package

FROM eclipse-temurin:17-jre
RUN useradd --system --create-home lakestream
USER lakestream
WORKDIR /home/lakestream
COPY --from=build /src/launcher/target/lakestream.jar /opt/lakestream/lakestream.jar
# Settings come from LAKESTREAM_* variables (LAKESTREAM_BOOTSTRAP_SERVERS=kafka:9092, ...).
ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75"
EXPOSE 9400 9401
ENTRYPOINT ["java", "-jar", "/opt/lakestream/lakestream.jar"]
CMD ["--help"]
