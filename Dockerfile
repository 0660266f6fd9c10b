# The one image built from this repository (api, controller, workers, migrate). Built by ops
# ahead of time: `docker build -t saas-sbc:0.1.0 .` — nothing is fetched when containers start
# (dependencies are pinned in setup.cfg and installed here, at build time).
FROM python:3.11.7-slim-bookworm

RUN useradd --system --uid 10001 --home /var/lib/sbc sbc \
 && mkdir -p /var/lib/sbc/fs-generated /var/spool/fs/rec /var/spool/fs/moh \
 && chown -R sbc:sbc /var/lib/sbc /var/spool/fs/rec /var/spool/fs/moh

WORKDIR /opt/sbc-app
# The package is installed in place (editable) so app/db/migrate.py finds migrations/ and
# alembic.ini next to it, exactly as in a checkout.
COPY setup.cfg pyproject.toml README.md alembic.ini ./
COPY app ./app
COPY esl ./esl
COPY migrations ./migrations
# FreeSWITCH config as shipped: the controller's generated files follow this layout, and
# `python -m app.routing.fsvalidate`-style checks can run inside the image.
COPY fs-conf ./fs-conf
COPY dialplan ./dialplan
RUN python -m venv /opt/sbc \
 && /opt/sbc/bin/pip install --no-cache-dir --disable-pip-version-check -e . \
 && find /opt/sbc-app -name '__pycache__' -prune -exec rm -rf {} +

# Speech models are baked in here, never fetched when a container starts. pocketsphinx's English
# model ships inside its wheel (the default engine). For Whisper, put a whisper.cpp ggml file in
# models/ of the build context and name it, with its checksum, as build arguments:
#   docker build --build-arg WHISPER_MODEL=ggml-tiny.en-q8_0.bin \
#                --build-arg WHISPER_MODEL_SHA256=<sha256> -t saas-sbc:0.1.0 .
# then `sbc config set transcription.engine '"whisper"'` and
# `sbc config set transcription.whisper_model '"/opt/sbc-models/ggml-tiny.en-q8_0.bin"'`
# (a Vosk model directory goes the same way, docs/media.md).
ARG WHISPER_MODEL=""
ARG WHISPER_MODEL_SHA256=""
COPY models/ /opt/sbc-models/
RUN if [ -n "$WHISPER_MODEL" ]; then \
      echo "$WHISPER_MODEL_SHA256  /opt/sbc-models/$WHISPER_MODEL" | sha256sum -c - ; \
    fi

ENV PATH=/opt/sbc/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    SBC_FS_GENERATED_DIR=/var/lib/sbc/fs-generated
USER sbc
EXPOSE 8080 8084
CMD ["sbc", "--help"]
