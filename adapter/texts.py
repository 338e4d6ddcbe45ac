"""Words for the HTML pages (the status page, the replay page) in the module's two languages."""

from __future__ import annotations

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "title": "Initiative Sidecar: status",
        "login_title": "Initiative Sidecar: log in",
        "login_intro": "Paste the sidecar's token (the one in the module settings) to see your worlds.",
        "token": "Token",
        "log_in": "Log in",
        "log_out": "Log out",
        "wrong_token": "That is not a token this sidecar knows.",
        "throttled": "Too many wrong tokens: wait a little and try again.",
        "no_worlds": "No world has connected yet with this token.",
        "connected": "connected",
        "not_connected": "not connected",
        "ruleset": "Ruleset",
        "last_seq": "Last seq",
        "combat": "Combat",
        "round": "round",
        "revision": "plan revision",
        "initiative": "Initiative",
        "name": "Combatant",
        "acts": "Acts",
        "reaction": "Reaction",
        "tags": "Tags",
        "rules": "Rules",
        "reaction_yes": "yes",
        "reaction_no": "no",
        "prompts": "Pending prompts",
        "no_prompts": "No prompt is waiting.",
        "refusals": "Last refusals",
        "no_refusals": "Nothing refused.",
        "to": "to",
        "live": "live",
        "offline": "reconnecting…",
        "acts.full": "full turn",
        "acts.movement_or_action": "move or act",
        "acts.movement_only": "move only",
        "acts.defend_only": "defend only",
        "acts.none": "no turn",
        "acts.held": "held",
    },
    "ru": {
        "title": "Initiative Sidecar: состояние",
        "login_title": "Initiative Sidecar: вход",
        "login_intro": "Вставьте токен сервиса (тот, что в настройках модуля), чтобы увидеть свои миры.",
        "token": "Токен",
        "log_in": "Войти",
        "log_out": "Выйти",
        "wrong_token": "Этот токен сервису не известен.",
        "throttled": "Слишком много неверных токенов: подождите немного и попробуйте снова.",
        "no_worlds": "С этим токеном ещё не подключался ни один мир.",
        "connected": "подключён",
        "not_connected": "не подключён",
        "ruleset": "Правила",
        "last_seq": "Последний seq",
        "combat": "Бой",
        "round": "раунд",
        "revision": "версия плана",
        "initiative": "Инициатива",
        "name": "Участник",
        "acts": "Ход",
        "reaction": "Реакция",
        "tags": "Метки",
        "rules": "Правила",
        "reaction_yes": "есть",
        "reaction_no": "нет",
        "prompts": "Ждут ответа",
        "no_prompts": "Ничего не ждёт ответа.",
        "refusals": "Последние отказы",
        "no_refusals": "Отказов нет.",
        "to": "кому",
        "live": "на связи",
        "offline": "переподключение…",
        "acts.full": "полный ход",
        "acts.movement_or_action": "движение или действие",
        "acts.movement_only": "только движение",
        "acts.defend_only": "только защита",
        "acts.none": "нет хода",
        "acts.held": "выжидает",
    },
}


def language(asked: str | None, accept: str) -> str:
    """``?lang=`` if it is one of ours, else the first of ours in Accept-Language, else en."""
    if asked in TEXTS:
        return str(asked)
    for part in accept.split(","):
        code = part.split(";")[0].strip().lower()[:2]
        if code in TEXTS:
            return code
    return "en"
